/**
 * What a committed change to the registry announces to every instance (the registry editor makes it,
 * src/infra/announce.ts carries it): which stations to reload, and whether token caches or the rest of
 * the registry cache must forget what they hold.
 */
export interface RegistryChange {
  /** Stations whose registry data (record, layout, events, photo, assignments) changed. */
  hrsIds: readonly string[];
  /** Tokens changed (made or revoked): token caches must forget. */
  tokens?: boolean;
  /** Something every instance's registry cache holds changed beyond stations (an originator's call-log mode). */
  registry?: boolean;
}
