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

  return { api, browserFields, post };
})();
