import { SCOPE_LABELS } from './scope-labels.ts'

/**
 * The sign-in, consent and set-password pages (CONTRACT §28): plain HTML forms, no script, one
 * stylesheet allowed by its hash. They work without JavaScript and under a policy that lets the
 * page load nothing at all.
 */

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:26rem;margin:3rem auto;padding:1.5rem 2rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem;margin:0 0 1rem}label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #99a;border-radius:.25rem}
fieldset{border:1px solid #ccd;border-radius:.25rem;margin:1rem 0;padding:.5rem 1rem}fieldset label{font-weight:400;margin:.25rem 0}
.buttons{display:flex;gap:.75rem;margin-top:1.25rem}button{font:inherit;padding:.5rem 1.25rem;border-radius:.25rem;border:1px solid #336;cursor:pointer}
button.primary{background:#2b4fd8;color:#fff;border-color:#2b4fd8}.error{background:#fde8e8;border:1px solid #e0a0a0;padding:.5rem .75rem;border-radius:.25rem}
.note{color:#556;font-size:.9rem}code{font-size:.9rem}`

const styleHash = `'sha256-${new Bun.CryptoHasher('sha256').update(STYLE).digest('base64')}'`

/** The page's policy: nothing loads; forms post here, and the consent form's answer may redirect to the app. */
export function pageHeaders(formTarget?: string): Record<string, string> {
  const formAction = formTarget ? `'self' ${formTarget}` : `'self'`
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src ${styleHash}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    // Not no-referrer: a browser then sends `Origin: null` with the form, and the origin check could not tell it from a forgery.
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  }
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string)

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · pfin</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>
`
}

const errorBox = (error?: string) => (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '')
const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`

export interface ConsentView {
  clientName: string
  /** Where the answer goes: a host, or an app's scheme. */
  destination: string
  /** The scopes asked for; those in `checked` are ticked. */
  scopes: readonly string[]
  checked: readonly string[]
  handle: string
  csrf: string
  login?: string
  error?: string
}

export function consentPage(view: ConsentView): string {
  const boxes = view.scopes
    .map((scope) => {
      const tick = view.checked.includes(scope) ? ' checked' : ''
      const label = SCOPE_LABELS[scope] ?? scope
      return `<label><input type="checkbox" name="scope" value="${escapeHtml(scope)}"${tick}> ${escapeHtml(label)} <code>${escapeHtml(scope)}</code></label>`
    })
    .join('\n')
  return page(
    'Sign in',
    `<h1>Sign in to pfin</h1>
<p><strong>${escapeHtml(view.clientName)}</strong> asks for access to your pfin data. It will return you to <strong>${escapeHtml(view.destination)}</strong>.</p>
<p class="note">The app named itself: allow it only if you started this sign-in from it.</p>
${errorBox(view.error)}
<form method="post" action="/signin">
${hidden('request', view.handle)}${hidden('csrf', view.csrf)}
<label for="login">Login</label><input type="text" id="login" name="login" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(view.login ?? '')}">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<fieldset><legend>Allow it to</legend>
${boxes}
</fieldset>
<div class="buttons"><button class="primary" type="submit" name="action" value="allow">Allow</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button></div>
</form>`,
  )
}

export function invitePage(view: { login: string; invite: string; csrf: string; error?: string; minLength: number }): string {
  return page(
    'Set your password',
    `<h1>Set your pfin password</h1>
<p>Your login is <strong>${escapeHtml(view.login)}</strong>. Choose a password of at least ${view.minLength} characters; a few unrelated words make a good one.</p>
${errorBox(view.error)}
<form method="post" action="/signin">
${hidden('invite', view.invite)}${hidden('csrf', view.csrf)}
<input type="text" name="login" value="${escapeHtml(view.login)}" autocomplete="username" hidden readonly>
<label for="password">New password</label><input type="password" id="password" name="password" autocomplete="new-password" minlength="${view.minLength}" required>
<label for="confirm">The same again</label><input type="password" id="confirm" name="confirm" autocomplete="new-password" minlength="${view.minLength}" required>
<div class="buttons"><button class="primary" type="submit">Set password</button></div>
</form>`,
  )
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`)
}
