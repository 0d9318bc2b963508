/**
 * How Laravel-style validation names and measures input: a field's display name
 * (`sender_id` → `sender id`) and a text's length in characters. Pure, so workflows may import it.
 */

export const label = (key: string): string => key.replaceAll('_', ' ');

/** Characters as Laravel counts them (mb_strlen): Unicode code points, not UTF-16 units. */
export const characters = (value: string): number => [...value].length;
