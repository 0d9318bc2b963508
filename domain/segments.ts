import { SegmentedMessage } from 'sms-segments-calculator';
import { renderOptOutLink } from './opt-out.js';

export interface SegmentCount {
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
}

/**
 * How many SMS segments a text takes: GSM-7 (160 septets, 153 per part, extension characters
 * counting twice) unless a character needs UCS-2 (70, 67 per part). Twilio's own calculator.
 */
export function countSegments(text: string): SegmentCount {
  const message = new SegmentedMessage(text, 'auto');
  return { encoding: message.encodingName, segments: message.segmentsCount };
}

/** Segments of a campaign message as recipients get it: `{opt_out_url}` counts as the link it becomes. */
export function campaignSegments(body: string, publicUrl: string): number {
  return countSegments(renderOptOutLink(body, publicUrl)).segments;
}
