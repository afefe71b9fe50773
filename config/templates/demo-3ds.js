// What both demo pages (demo-checkout.html, demo-webview.html) do alike: the harness's API,
// the AReq's browser fields, a form post. The harness puts this file into each page.
const DemoThreeDS = (() => {
  'use strict';

  // The harness's API; a refusal throws its reason. A 502 of authenticate still carries the transaction.
  async function api(path, body) {
    const init = body === undefined ? { cache: 'no-store' } : { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
    const response = await fetch(path, init);
    let json = {};
    try { json = await response.json(); } catch (_) { /* not JSON: the status says enough */ }
    if (!response.ok && !json.threeDSServerTransID) throw new Error(json.error || path + ' answered HTTP ' + response.status);
    return json;
  }

  // What the AReq's browser fields hold, as far as a script can read them (browserIP: the merchant's
  // server knows it). `acceptHeader`: what the browser asked the page with, which a script cannot read.
  function browserFields(acceptHeader) {
    const language = navigator.language || 'en';
    const depth = [48, 32, 24, 16, 15, 8, 4, 1].find((d) => d <= screen.colorDepth) || 24;
    return {
      browserAcceptHeader: (acceptHeader || 'text/html').slice(0, 2048),
      browserUserAgent: navigator.userAgent.slice(0, 2048),
      browserJavaEnabled: typeof navigator.javaEnabled === 'function' ? navigator.javaEnabled() : false,
      browserJavascriptEnabled: true,
      browserLanguage: language.length <= 8 ? language : language.split('-')[0],
      browserColorDepth: String(depth),
      browserScreenHeight: String(screen.height),
      browserScreenWidth: String(screen.width),
      browserTZ: String(new Date().getTimezoneOffset()),
      acceptLanguage: (navigator.languages && navigator.languages.length ? navigator.languages : [language]).slice(0, 99),
    };
  }

  // Posts `fields` to `action` in the window named `target`, as a form does.
  function post(action, target, fields) {
    const form = document.createElement('form');
    form.method = 'post'; form.action = action; form.target = target; form.hidden = true;
    for (const [name, value] of Object.entries(fields)) {
      const input = document.createElement('input');
      input.type = 'hidden'; input.name = name; input.value = value;
      form.appendChild(input);
    }
    document.body.appendChild(form);
    form.submit();
    form.remove();
  }

  // Secure Payment Confirmation (2.3.1): what the ACS asked for after an ARes S (record.spc), run in the browser's
  // PaymentRequest; the result (the assertion, or why there is none) goes to the 3DS Server, which sends the second AReq
  // and answers its record. SPC takes only an https payee origin: over http the AReq named the demo merchant's.
  const fromBase64url = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const base64url = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const spcPayeeOrigin = () => (location.protocol === 'https:' ? location.origin : 'https://merchant.example');

  async function confirmPayment(spc) {
    const data = spc.spcTransData, credentials = spc.webAuthnCredList;
    let result;
    try {
      if (!window.PaymentRequest) throw new Error('no PaymentRequest in this browser');
      const request = new PaymentRequest([{ supportedMethods: 'secure-payment-confirmation', data: {
        credentialIds: credentials.map((credential) => fromBase64url(credential.credentialIds)), rpId: credentials[0].rpID,
        challenge: fromBase64url(data.challenge), instrument: { displayName: data.displayName, icon: data.icon },
        payeeOrigin: data.payeeOrigin, payeeName: data.payeeName, timeout: Number(data.timeout) } }],
        { total: { label: 'Total', amount: { currency: data.currency, value: data.value } } });
      const response = await request.show();
      await response.complete('unknown');  // the ACS has not verified it yet: the second AReq's answer says
      const credential = response.details;
      result = { assertion: { id: credential.id, rawId: base64url(credential.rawId), type: credential.type, response: {
        authenticatorData: base64url(credential.response.authenticatorData), clientDataJSON: base64url(credential.response.clientDataJSON),
        signature: base64url(credential.response.signature) } } };
    } catch (error) {
      // spcIncompInd: 02 the cardholder cancelled, 03 timed out, 01 anything else (SB 279).
      result = { spcIncompInd: error.name === 'AbortError' || error.name === 'NotAllowedError' ? '02' : error.name === 'TimeoutError' ? '03' : '01' };
    }
    return api(spc.resultURL, result);
  }

  return { api, browserFields, post, confirmPayment, spcPayeeOrigin };
})();
