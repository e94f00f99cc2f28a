import type { Request } from 'express';

/**
 * The client's address: Express's `req.ip`, which follows `X-Forwarded-For`
 * only through the proxies `PACER_TRUST_PROXY` names (app setting `trust
 * proxy`); with it off, the TCP peer. IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is
 * written as IPv4 so one client has one key. Every place that needs "who is
 * calling" (rate limits, DCR windows, webhook `source_ip`, request logs) reads
 * it here.
 */
export function clientIpOf(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  return ip.startsWith('::ffff:') ? ip.slice('::ffff:'.length) : ip;
}
