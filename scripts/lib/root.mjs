import { fileURLToPath } from 'node:url';

/** The project folder: the scripts work on this checkout wherever they are started from. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
