// The edge of the dashboard: the one client of the public REST API and the
// dashboard's session API. The session cookie authenticates every call;
// unsafe ones carry the session's CSRF token (the server also checks their
// Origin). Only the service modules beside this one call it: each maps the
// API's answers to the types its pages read, once, here at the edge.

import type { components } from '../../../../sdk/typescript/src/schema';

export const API = '/api/public/v1';
export const SESSION = '/api/dashboard/v1/session';

// The public API's types are the SDK's, generated from the OpenAPI document.
export type Schemas = components['schemas'];

export class ApiError extends Error {
  constructor(
    public status: number,
    message: string,
  ) {
    super(message);
  }
}

let csrf = '';

// Requests of the account on screen. A switch (or sign-out) cancels those
// still under way: answered after it, they would be the other account's
// 404s, logged by the browser as errors.
let inflight = new AbortController();

/** cancelInflight aborts every request under way (a sign-out, another account). */
export function cancelInflight() {
  inflight.abort();
  inflight = new AbortController();
}

/** setCSRF remembers the session's CSRF token for unsafe calls. */
export function setCSRF(token: string) {
  csrf = token;
}

/**
 * call makes one request and answers its JSON body (undefined for 204), or
 * throws an ApiError saying why. signal (a query's, when TanStack Query
 * cancels it) aborts it too.
 */
export async function call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['X-CSRF-Token'] = csrf;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal: signal ? AbortSignal.any([inflight.signal, signal]) : inflight.signal,
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(res.status, `unexpected answer (${res.status})`);
  }
  if (!res.ok) {
    const msg = (data as { error?: string } | null)?.error ?? `request failed (${res.status})`;
    throw new ApiError(res.status, msg);
  }
  return data as T;
}

/** date is an API timestamp as a Date (null stays null). */
export function date(iso: string): Date;
export function date(iso: string | null): Date | null;
export function date(iso: string | null | undefined): Date | null;
export function date(iso: string | null | undefined): Date | null {
  return iso ? new Date(iso) : null;
}

/** Page is one page of a list the API pages by cursor, its items mapped. */
export type Page<T> = { items: T[]; nextCursor: string | null };
