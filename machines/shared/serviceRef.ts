import { z } from 'zod';

/**
 * A service of the incident-management upstream, as incidents and channel routing both name it:
 * its upstream id and, when known, its display name.
 */
export const serviceRefSchema = z.object({ id: z.string().min(1), name: z.string().nullable() });
export type ServiceRef = z.infer<typeof serviceRefSchema>;
