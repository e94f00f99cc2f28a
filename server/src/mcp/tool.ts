import type { Scope } from '@pacer/contract';
import type { PgBoss } from 'pg-boss';
import type { z } from 'zod';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { Actor } from '../lib/actor.ts';
import type { TokenPrincipal } from '../modules/oauth/token.service.ts';
import type { FitDecodeQueue } from '../modules/workouts/fit-decode-queue.ts';

/** The specification's three phases (§4.2), each behind its own `PACER_MCP_*_ENABLED` switch. */
export type ToolPhase = 'read' | 'write' | 'async';

/** MCP 2025-11-25 tool annotations: every tool states all four hints. */
export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  /** Pacer's tools touch only the athlete's own data in Pacer. */
  readonly openWorldHint: false;
}

export interface ToolContext {
  readonly db: Db;
  readonly boss: PgBoss;
  readonly config: Config;
  readonly logger: Logger;
  /** The OAuth side of the caller (scopes, features); services get `actor`. */
  readonly principal: TokenPrincipal;
  readonly actor: Actor;
  readonly decoding: FitDecodeQueue;
}

// Method syntax (`run(…)`) keeps a list of tools with different schemas assignable to one type.
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  /** snake_case, at most 40 characters; hosts and users script against it. */
  readonly name: string;
  readonly title: string;
  /** Written for a model: what, when, units, limits. */
  readonly description: string;
  readonly phase: ToolPhase;
  /** Scopes the token must hold: those of the REST route the tool mirrors. */
  readonly scopes: readonly Scope[];
  /** Listed and callable only while the user's profile has this feature on. */
  readonly feature?: 'nutrition';
  readonly annotations: ToolAnnotations;
  /**
   * A read-only tool (by its hints) that stores what it derives on first read
   * (decoded streams): it runs on the primary, never on a read replica.
   */
  readonly readsPrimary?: true;
  /** Arguments; an object schema taken from the contract. */
  readonly input: I;
  /** `structuredContent`; an object schema taken from the contract. */
  readonly output: O;
  /**
   * Parts of the schemas `tools/list` states in words because another tool
   * spells them out (docs/design.md §3 "Tool list size"): `arguments` maps a
   * top-level argument to the tool whose argument of that name has the shape;
   * `result` names the tool whose result (or each of whose listed records)
   * has the shape of this tool's result (or of each of its listed records).
   */
  readonly sameShapeAs?: {
    readonly arguments?: Readonly<Record<string, string>>;
    readonly result?: string;
  };
  /** Scopes a call needs beyond `scopes`, decided by its arguments (a nutrition report needs `nutrition:read`). */
  scopesFor?(args: z.output<I>): readonly Scope[];
  run(context: ToolContext, args: z.output<I>): Promise<z.input<O>>;
}

/** Types a tool's `run` against its own schemas; the registry holds them as `ToolDefinition`. */
export function defineTool<I extends z.ZodType, O extends z.ZodType>(tool: ToolDefinition<I, O>): ToolDefinition {
  return tool;
}

/*
 * The hint sets, one per kind of effect (MCP 2025-11-25 `ToolAnnotations`:
 * `destructiveHint` is true unless the tool "performs only additive updates";
 * `idempotentHint` means a repeat with the same arguments has no further
 * effect). Hosts use them to decide whether to ask the user before a call;
 * test/unit/mcp-tool-hints.test.ts checks every tool's set against what it does.
 */

export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** A write that adds something each time it is called (unless an idempotency key is sent). */
export const ADDITIVE_WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

/** A write that changes no stored value of the athlete's and has no further effect when repeated (a decision recorded once). */
export const IDEMPOTENT_WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** A write that overwrites, replaces or deletes what is stored; repeating it changes nothing more. */
export const DESTRUCTIVE_WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
};

/** A write that may overwrite what is stored and may act again when repeated. */
export const REPEATABLE_DESTRUCTIVE_WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};
