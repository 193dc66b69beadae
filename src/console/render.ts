/**
 * Renders a page through @fastify/view and eta (escaping on: `<%= %>` escapes, and the templates use
 * `<%~ %>` only for what eta itself rendered: the layout's body and included partials). Every page
 * gets the person, this session's CSRF token for its forms, and no caching.
 */
import type {} from '@fastify/csrf-protection'
import type {} from '@fastify/view'
import type { FastifyReply, FastifyRequest } from 'fastify'

export interface PageData {
  title: string
  /** Which entry of the navigation is this page, if any. */
  nav: 'pending' | 'decided' | 'events' | 'payments' | 'status' | null
  [name: string]: unknown
}

export async function renderPage (
  request: FastifyRequest,
  reply: FastifyReply,
  template: string,
  data: PageData,
  status = 200,
): Promise<string> {
  const csrf = request.person === null ? null : reply.generateCsrf()
  return await reply.code(status).header('cache-control', 'no-store').view(template, { ...data, person: request.person, csrf })
}

/** Page numbers from the query, 1-based; anything else is the first page. */
export function pageNumber (text: unknown): number {
  const n = typeof text === 'string' && /^[1-9][0-9]{0,5}$/.test(text) ? Number(text) : 1
  return n
}

export const PAGE_SIZE = 25

export interface Pager { page: number, pages: number, total: number, previous: string | null, next: string | null }

export function pager (path: string, page: number, total: number): Pager {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE))
  return { page, pages, total, previous: page > 1 ? `${path}?page=${page - 1}` : null, next: page < pages ? `${path}?page=${page + 1}` : null }
}
