export { createPacerClient, type PacerClient, type PacerClientOptions, type PacerContract } from './client.ts';
export {
  ABSORPTION_TYPES,
  contract,
  MEALS,
  SCOPES,
  WELLNESS_FIELDS,
  type NutritionDay,
  type NutritionItem,
  type NutritionItemInput,
  type NutritionLog,
  type NutritionUpsert,
  type Problem,
  type Scope,
  type WellnessRecord,
  type WellnessUpsert,
} from '@pacer/contract';
