import { FORM_TOKEN_FIELD } from './form-token.js';

/** Escapes text for HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · pgcloud</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem; color: #1d2733; }
  h1 { font-size: 1.4rem; }
  label { display: block; margin: 1rem 0 0.25rem; font-weight: 600; }
  input { width: 100%; box-sizing: border-box; padding: 0.5rem; font-size: 1rem; }
  input[name=user_code] { font-family: monospace; letter-spacing: 0.15em; text-transform: uppercase; }
  .actions { margin-top: 1.5rem; display: flex; gap: 0.75rem; }
  button { padding: 0.5rem 1.25rem; font-size: 1rem; cursor: pointer; }
  .error { background: #fdecea; border: 1px solid #f5c2c0; padding: 0.75rem; border-radius: 4px; }
  .ok { background: #e8f5e9; border: 1px solid #b7dfb9; padding: 0.75rem; border-radius: 4px; }
  .hint { color: #5b6b7b; font-size: 0.9rem; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** The verification form of the local identity provider. */
export function deviceForm(
  values: { user_code?: string; login?: string; email?: string },
  formToken: string,
  error?: string,
): string {
  return page(
    'Sign in a device',
    `<h1>Sign in to pgcloud</h1>
<p class="hint">Enter the code your terminal shows, and the login you want to use.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/device">
  <input type="hidden" name="${FORM_TOKEN_FIELD}" value="${escapeHtml(formToken)}">
  <label for="user_code">Code</label>
  <input id="user_code" name="user_code" placeholder="XXXX-XXXX" autocomplete="off" required value="${escapeHtml(values.user_code ?? '')}">
  <label for="login">Login</label>
  <input id="login" name="login" autocomplete="username" required value="${escapeHtml(values.login ?? '')}">
  <label for="email">Email <span class="hint">(optional)</span></label>
  <input id="email" name="email" type="email" autocomplete="email" value="${escapeHtml(values.email ?? '')}">
  <div class="actions">
    <button type="submit" name="action" value="approve">Approve</button>
    <button type="submit" name="action" value="deny">Deny</button>
  </div>
</form>`,
  );
}

/** The confirmation after the person answered. */
export function deviceDone(outcome: 'approved' | 'denied', login: string): string {
  return outcome === 'approved'
    ? page(
        'Device approved',
        `<h1>Device approved</h1><p class="ok">Signed in as <strong>${escapeHtml(login)}</strong>. You can close this page and return to your terminal.</p>`,
      )
    : page(
        'Request denied',
        `<h1>Request denied</h1><p class="ok">The sign-in request was denied. Nothing was signed in.</p>`,
      );
}
