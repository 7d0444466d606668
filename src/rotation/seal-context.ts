/**
 * What binds a sealed secret to its journal entry (AES-GCM additional data), so that a sealed
 * secret moved to another entry does not open.
 */
export const sealContext = (name: string, newId: string) => `token-rotator:${name}:${newId}`;

/** A held secret has no id to bind it to: the rotation's start stands in. */
export const heldSealContext = (name: string, startedAt: string) => `token-rotator:${name}:held:${startedAt}`;
