import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply } from 'fastify';

/** The form field and the cookie that carry the verification form's anti-forgery token. */
export const FORM_TOKEN_FIELD = 'form_token';
const FORM_TOKEN_COOKIE = 'pgcloud_device_form';

/**
 * Gives the form a fresh anti-forgery token: set in an HttpOnly, SameSite=Strict cookie
 * and returned for the form's hidden field (docs/api/errors.md#the-edge). Another site can
 * neither read the token nor make a browser send the cookie with its own post.
 */
export function issueFormToken(reply: FastifyReply, publicBaseUrl: string): string {
  const token = randomBytes(32).toString('base64url');
  reply.header(
    'Set-Cookie',
    stringifySetCookie({
      name: FORM_TOKEN_COOKIE,
      value: token,
      httpOnly: true,
      sameSite: 'strict',
      secure: new URL(publicBaseUrl).protocol === 'https:',
      path: '/device',
    }),
  );
  return token;
}

/**
 * Why a posted form is refused, or undefined when it came from the form this gateway
 * served: the field must match the cookie, and the browser must not say the post came
 * from elsewhere (docs/api/errors.md#the-edge).
 */
export function formRefusal(
  req: { headers: IncomingHttpHeaders },
  field: unknown,
  publicBaseUrl: string,
): string | undefined {
  const cookie = parseCookie(req.headers.cookie ?? '')[FORM_TOKEN_COOKIE];
  if (typeof field !== 'string' || !cookie || !sameText(field, cookie))
    return 'This form has expired or did not come from this page. Submit it again.';
  if (!postedFromThisSite(req.headers, publicBaseUrl))
    return 'This form was sent from another site. Open the page yourself and submit it there.';
  return undefined;
}

/**
 * An Origin, when sent, must be PUBLIC_BASE_URL's origin or this very host (the page
 * posting to itself; the Host check already keeps that to the names this gateway serves).
 * Under this gateway's `Referrer-Policy: no-referrer`, browsers send a same-origin form
 * post with `Origin: null`: it passes unless the browser's Sec-Fetch-Site (absent in
 * browsers without Fetch Metadata) says the post came from elsewhere. Another site cannot
 * pass in any case, for want of the SameSite=Strict cookie and the token that matches it.
 */
export function postedFromThisSite(
  headers: { origin?: string; host?: string; 'sec-fetch-site'?: string | string[] },
  publicBaseUrl: string,
): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = headers.origin;
  if (origin === undefined || origin === 'null') return true;
  if (origin === new URL(publicBaseUrl).origin) return true;
  try {
    return headers.host !== undefined && new URL(origin).host === headers.host.toLowerCase();
  } catch {
    return false;
  }
}

function sameText(a: string, b: string): boolean {
  const [left, right] = [Buffer.from(a), Buffer.from(b)];
  return left.length === right.length && timingSafeEqual(left, right);
}
