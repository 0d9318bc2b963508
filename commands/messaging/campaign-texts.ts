/**
 * What a campaign's save needs to know of its text: the segments one message takes, or, for a
 * personalised campaign (domain/personalization.ts), each recipient's own text with its own
 * segments, so that the daily cap counts what each recipient is really sent.
 */
import type { NewCampaign } from '../../db/campaigns.js';
import { campaignSegments } from '../../domain/segments.js';

export function campaignTexts(
  request: { message: string; personalized: ReadonlyMap<string, string> | null },
  publicUrl: string,
): Pick<NewCampaign, 'segments' | 'personalized'> {
  if (!request.personalized) return { segments: campaignSegments(request.message, publicUrl) };
  return {
    personalized: new Map(
      [...request.personalized].map(([recipient, body]) => [
        recipient,
        { body, segments: campaignSegments(body, publicUrl) },
      ]),
    ),
  };
}
