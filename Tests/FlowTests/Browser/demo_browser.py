#!/usr/bin/env python3
"""The demo checkout and its web-view mode in a real browser: headless Chromium driven by Selenium.

    demo_browser.py --base-url http://127.0.0.1:PORT --screenshots DIR --case NAME

Runs one case (see CASES) against a running harness, saves a PNG of each page of the issuer's
challenge (and of the result) to DIR, and prints one JSON line with what the browser saw: the
outcome the checkout shows, or the custom-scheme URL the web view was redirected to. Exits 1,
saying why, when the page does not behave. Every wait is on the page's state (WebDriverWait),
bounded; nothing sleeps a fixed time.

Needs Debian's chromium and chromium-driver, and selenium (PyPI); RealBrowserTests.swift runs it.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

# Each wait's bound: a page of the harness answers in milliseconds; the 3DS Method waits up to 10 s.
WAIT_SECONDS = 25
RETURN_URL = "harness-demo://3dsecure"


class Failure(Exception):
    """The page did not do what the case expects."""


class Browser:
    """One headless Chromium with its performance log (the network events, for the redirect)."""

    def __init__(self, chromium, chromedriver, width, height):
        self.profile = tempfile.mkdtemp(prefix="demo-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        # Secure Payment Confirmation ships on Chromium's Linux build switched off; this feature switches it on
        # (found by trying: SecurePaymentConfirmation alone leaves the browser side unbound).
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                         "--enable-features=SecurePaymentConfirmationBrowser",
                         "--lang=en-GB", f"--window-size={width},{height}", f"--user-data-dir={self.profile}"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(chromedriver), options=options)
        self.driver.set_page_load_timeout(WAIT_SECONDS)
        self.events = []

    def close(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def wait(self, condition, what, seconds=WAIT_SECONDS):
        try:
            return WebDriverWait(self.driver, seconds).until(condition)
        except TimeoutException:
            raise Failure(f"timed out after {seconds} s waiting for {what} (at {self.driver.current_url})") from None

    def network_events(self):
        """Every network event so far (the log is drained on each read, so they are kept here)."""
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"].startswith("Network."):
                self.events.append(message)
        return self.events

    def redirect_to(self, prefix):
        """The URL starting with `prefix` that an HTTP redirect sent the page to, once one has.

        Chromium does not open a scheme it does not know, but it reports the request it would
        make: a Network.requestWillBeSent for that URL, with the redirect's response."""
        for event in self.network_events():
            params = event["params"]
            if event["method"] == "Network.requestWillBeSent" and params["request"]["url"].startswith(prefix) and "redirectResponse" in params:
                return {"url": params["request"]["url"], "status": params["redirectResponse"]["status"],
                        "from": params["redirectResponse"]["url"]}
        return None


class Screenshots:
    def __init__(self, directory, case):
        self.directory = directory
        self.case = case
        self.saved = []
        os.makedirs(directory, exist_ok=True)

    def take(self, browser, step):
        path = os.path.join(self.directory, f"{self.case}-{len(self.saved) + 1}-{step}.png")
        browser.driver.save_screenshot(path)
        self.saved.append(path)


# MARK: The checkout

def open_checkout(browser, base_url, pan, window_size, shots=None, version=None):
    """Fills in the checkout and pays (`shots`: with a picture of the filled-in form first; `version`: the messageVersion chosen)."""
    driver = browser.driver
    driver.get(base_url + "/demo/checkout")
    card = browser.wait(EC.element_to_be_clickable((By.ID, "card-number")), "the card number field")
    card.clear()
    card.send_keys(pan)
    # The 3-D Secure options are folded away: open them to choose the window size.
    driver.find_element(By.CSS_SELECTOR, "#options summary").click()
    Select(browser.wait(EC.visibility_of_element_located((By.ID, "window-size")), "the window size")).select_by_value(window_size)
    if version:
        Select(driver.find_element(By.ID, "message-version")).select_by_value(version)
    if shots:
        shots.take(browser, "checkout")
    driver.find_element(By.ID, "pay").click()


def enter_challenge(browser, expected_size):
    """Switches into the challenge iframe once the ACS's first page is in it; checks the iframe's size."""
    frame = browser.wait(EC.visibility_of_element_located((By.ID, "challenge-frame")), "the challenge iframe")
    width, height = frame.get_attribute("width"), frame.get_attribute("height")
    if expected_size and (width, height) != expected_size:
        raise Failure(f"the challenge iframe is {width}x{height}, not {expected_size[0]}x{expected_size[1]}")
    browser.driver.switch_to.frame(frame)
    browser.wait(EC.presence_of_element_located((By.CSS_SELECTOR, "form button[name=action]")), "the ACS's challenge page")


def press(browser, action):
    """Presses the ACS page's button for `action` and waits for the page it leads to (inside the iframe)."""
    driver = browser.driver
    button = driver.find_element(By.CSS_SELECTOR, f"button[name=action][value={action}]")
    button.click()
    return button


def gone(element):
    """A wait's condition: `element` has left its document. ChromeDriver says so of an element of a frame that navigated
    either as a stale reference or, under load, as an inspector error ("does not belong to the document")."""
    def condition(_):
        try:
            element.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise
    return condition


def next_page(browser, old_button, what):
    browser.wait(gone(old_button), f"the ACS to answer ({what})")
    browser.wait(EC.presence_of_element_located((By.CSS_SELECTOR, "form button[name=action]")), what)


def last_press(browser, action):
    """The press that ends the challenge: the iframe goes away, the checkout shows the result."""
    press(browser, action)
    browser.driver.switch_to.default_content()


def result(browser):
    driver = browser.driver
    browser.wait(EC.visibility_of_element_located((By.ID, "result")), "the result view")
    text = lambda element_id: driver.find_element(By.ID, element_id).text
    return {
        "heading": text("result-heading"),
        "state": driver.find_element(By.ID, "result").get_attribute("data-state"),
        "transStatus": driver.find_element(By.ID, "result").get_attribute("data-trans-status"),
        "eci": text("result-eci"),
        "authenticationValue": text("result-authentication-value"),
        "challengeCancel": text("result-cancel"),
        "method": text("result-method"),
        "messageVersion": text("result-version"),
        "threeDSServerTransID": text("result-id"),
    }


def checkout_text_challenge(browser, args, shots):
    """The 3DS Method, then a text challenge: a wrong code (the page warns), then the right one: Y."""
    open_checkout(browser, args.base_url, "4000000000110009", "03")
    enter_challenge(browser, ("500", "600"))
    shots.take(browser, "code")
    driver = browser.driver
    driver.find_element(By.ID, "answer").send_keys("0000")
    old = press(browser, "submit")
    next_page(browser, old, "the same step again, after a wrong code")
    browser.wait(EC.presence_of_element_located((By.CSS_SELECTOR, "p.info.warning")), "the warning after a wrong code")
    shots.take(browser, "wrong-code")
    driver.find_element(By.ID, "answer").send_keys("1234")
    last_press(browser, "submit")
    outcome = result(browser)
    shots.take(browser, "result")
    return outcome


def checkout_single_select(browser, args, shots):
    """A single choice: option 2 (email) passes: Y."""
    open_checkout(browser, args.base_url, "4000000000120008", "02")
    enter_challenge(browser, ("390", "400"))
    shots.take(browser, "choice")
    browser.driver.find_element(By.CSS_SELECTOR, "input[type=radio][name=answer][value='2']").click()
    last_press(browser, "submit")
    outcome = result(browser)
    shots.take(browser, "result")
    return outcome


def checkout_oob(browser, args, shots):
    """Out of band: the cardholder approves in the bank's app, then presses continue: Y."""
    open_checkout(browser, args.base_url, "4000000000140006", "05")
    enter_challenge(browser, None)
    shots.take(browser, "out-of-band")
    last_press(browser, "continue")
    outcome = result(browser)
    shots.take(browser, "result")
    return outcome


def checkout_cancel(browser, args, shots):
    """The cardholder cancels the text challenge: N, challengeCancel 01."""
    open_checkout(browser, args.base_url, "4000000000110009", "04")
    enter_challenge(browser, ("600", "400"))
    shots.take(browser, "code")
    last_press(browser, "cancel")
    outcome = result(browser)
    shots.take(browser, "result")
    return outcome


def checkout_frictionless(browser, args, shots):
    """No challenge (--pan, a frictionless card): the result at once."""
    open_checkout(browser, args.base_url, args.pan or "4000000000001000", "02", shots)
    outcome = result(browser)
    if browser.driver.find_elements(By.ID, "challenge-frame"):
        raise Failure("a frictionless payment opened a challenge iframe")
    shots.take(browser, "result")
    return outcome


# MARK: Secure Payment Confirmation (2.3.1)

SPC_CARD = "4000000000810004"


def enrol_for_spc(browser, base_url, shots):
    """The issuer's enrolment page registers a credential of a virtual authenticator (DevTools WebAuthn domain) for the card."""
    driver = browser.driver
    driver.get(f"{base_url}/acs/spc/enrol?acctNumber={SPC_CARD}")
    driver.execute_cdp_cmd("WebAuthn.enable", {})
    driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})
    browser.wait(EC.element_to_be_clickable((By.ID, "enrol")), "the enrolment button").click()
    status = browser.wait(lambda d: d.find_element(By.ID, "status") if d.find_element(By.ID, "status").get_attribute("data-state") else None,
                          "the enrolment's outcome")
    shots.take(browser, "enrolled")
    if status.get_attribute("data-state") != "enrolled":
        raise Failure(f"enrolment: {status.text}")


def spc_checkout(browser, args, shots, mode):
    """Enrols, then pays at 2.3.1 with SPC in `mode` (DevTools Page.setSPCTransactionMode: autoAccept, autoReject)."""
    # WebAuthn scopes a credential to a domain: the issuer's page and the checkout are opened at localhost.
    base_url = args.base_url.replace("127.0.0.1", "localhost")
    enrol_for_spc(browser, base_url, shots)
    browser.driver.execute_cdp_cmd("Page.setSPCTransactionMode", {"mode": mode})
    open_checkout(browser, base_url, SPC_CARD, "02", version="2.3.1")


def checkout_spc(browser, args, shots):
    """The browser confirms the payment: the assertion verifies at the ACS: Y without a challenge."""
    spc_checkout(browser, args, shots, "autoAccept")
    outcome = result(browser)
    shots.take(browser, "result")
    return outcome


def checkout_spc_declined(browser, args, shots):
    """The cardholder declines the browser's prompt: spcIncompInd 02, and the ACS falls back to its text challenge (1234)."""
    spc_checkout(browser, args, shots, "autoReject")
    enter_challenge(browser, ("390", "400"))
    shots.take(browser, "fallback-challenge")
    browser.driver.find_element(By.ID, "answer").send_keys("1234")
    last_press(browser, "submit")
    outcome = result(browser)
    shots.take(browser, "result")
    return outcome


# MARK: The web view

def await_redirect(browser, prefix):
    found = browser.wait(lambda _: browser.redirect_to(prefix), f"a redirect to {prefix}…")
    return {"redirect": found["url"], "redirectStatus": found["status"], "redirectFrom": found["from"]}


def webview_challenge(browser, args, shots):
    """The ACS's pages in the whole view, then the notification's 303 to the app's scheme."""
    # The id under the name a gateway SDK's web view reads (3DSecureId), passed through authenticate to the notification's redirect.
    browser.driver.get(f"{args.base_url}/demo/webview?acctNumber=4000000000110009&returnURL={RETURN_URL}&returnIdParameter=3DSecureId")
    browser.wait(EC.presence_of_element_located((By.ID, "answer")), "the ACS's page, top level")
    if "/acs/" not in browser.driver.current_url:
        raise Failure(f"the challenge is not top level: the view is at {browser.driver.current_url}")
    shots.take(browser, "code")
    browser.driver.find_element(By.ID, "answer").send_keys("1234")
    press(browser, "submit")
    return await_redirect(browser, RETURN_URL)


def webview_frictionless(browser, args, shots):
    """No challenge: the merchant's return page redirects to the app's scheme."""
    browser.driver.get(f"{args.base_url}/demo/webview?acctNumber=4000000000001000&returnURL={RETURN_URL}")
    found = await_redirect(browser, RETURN_URL)
    shots.take(browser, "after-redirect")
    return found


def webview_unenrolled(browser, args, shots):
    """A card in no range: prepare refuses it, and the return page tells the app so (summaryStatus error)."""
    browser.driver.get(f"{args.base_url}/demo/webview?acctNumber=1234567890123452&returnURL={RETURN_URL}")
    found = await_redirect(browser, RETURN_URL)
    shots.take(browser, "after-redirect")
    return found


CASES = {
    "checkout-text-challenge": (checkout_text_challenge, (1280, 1000)),
    "checkout-single-select": (checkout_single_select, (1280, 1000)),
    "checkout-oob": (checkout_oob, (1280, 1000)),
    "checkout-cancel": (checkout_cancel, (1280, 1000)),
    "checkout-frictionless": (checkout_frictionless, (1280, 1000)),
    "checkout-spc": (checkout_spc, (1280, 1000)),
    "checkout-spc-declined": (checkout_spc_declined, (1280, 1000)),
    "webview-challenge": (webview_challenge, (390, 844)),
    "webview-frictionless": (webview_frictionless, (390, 844)),
    "webview-unenrolled": (webview_unenrolled, (390, 844)),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--screenshots", default=os.environ.get("HARNESS_BROWSER_SCREENSHOTS", "/tmp/harness-browser-screenshots"))
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    parser.add_argument("--pan", help="the card of checkout-frictionless (default 4000000000001000)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    args = parser.parse_args()

    run, (width, height) = CASES[args.case]
    shots = Screenshots(args.screenshots, args.case + (f"-{args.pan}" if args.pan else ""))
    started = time.monotonic()
    browser = Browser(args.chromium, args.chromedriver, width, height)
    try:
        outcome = run(browser, args, shots)
    except (Failure, WebDriverException) as error:
        try:
            browser.driver.switch_to.default_content()
            shots.take(browser, "failure")
        except WebDriverException:
            pass
        print(f"{args.case}: {error} (screenshots: {', '.join(shots.saved)})", file=sys.stderr)
        return 1
    finally:
        browser.close()
    outcome.update({"case": args.case, "screenshots": shots.saved, "seconds": round(time.monotonic() - started, 1)})
    print(json.dumps(outcome), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
