export {
  createPacerClient,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  parseRetryAfter,
  type PacerClient,
  type PacerClientOptions,
  type PacerContract,
  type RetryOptions,
} from './client.ts';
export { isPacerError, PacerError, type PacerErrorCode, type PacerErrorInit, type PacerProblem } from './errors.ts';
export { paginate, type PageArgs, type PageItem } from './paginate.ts';
export {
  buildAuthorizeUrl,
  createOAuthPacerClient,
  createPkcePair,
  createState,
  DEFAULT_REFRESH_SKEW_MS,
  exchangeCode,
  OAuthError,
  OAuthResponseError,
  refreshTokens,
  s256Challenge,
  validateAuthorizationResponse,
  type AuthorizationResponse,
  type AuthorizationResponseChecks,
  type AuthorizeUrlOptions,
  type ExchangeCodeOptions,
  type OAuthPacerClient,
  type OAuthPacerClientOptions,
  type OAuthResponseProblem,
  type PkcePair,
  type RefreshTokensOptions,
  type TokenSet,
} from './oauth.ts';
// Every type of the contract, wholesale (a hand-picked list once missed some), and the values clients use.
export type * from '@pacer/contract';
export { ABSORPTION_TYPES, contract, FIT_MEDIA_TYPE, MEALS, SCOPES, WELLNESS_FIELDS } from '@pacer/contract';
export {
  buildFitUploadForm,
  uploadActivity,
  uploadFit,
  type UploadActivityInput,
  type UploadFitInput,
  type UploadFitTarget,
} from './workouts.ts';
export { signWebhook, type SignedWebhook } from './webhooks.ts';
export { SDK_VERSION } from './version.ts';
