/**
 * The values the layout editor offers for a nozzle's `connector_type` and `vehicle_side`. The spec leaves
 * both open (any text; the registry file and the API accept any), so these are the reference values the
 * platform itself writes (the demo's and the sandbox's layouts): the SAE J2600 / ISO 17268 receptacles
 * for 70 and 35 MPa, and their high-flow variants for heavy-duty vehicles; the side of the vehicle the
 * nozzle reaches. The page (src/browser/portal/layout-editor.js) takes them from its `vocabulary.js`
 * (../page-words.ts); a value stored outside them stays selectable there as it is.
 */

export const CONNECTOR_TYPES = ['H70', 'H35', 'H70HF', 'H35HF'] as const;

export const VEHICLE_SIDES = ['left', 'right', 'both'] as const;
