import { describe, expect, it } from 'vitest';
import { timeAgo } from '../../mcp/oauth/pages.js';

describe('how long ago a client registered, on the consent page', () => {
  const now = new Date('2026-11-27T15:00:00Z');
  const secondsAgo = (seconds: number) => new Date(now.getTime() - seconds * 1000);

  it('names the largest whole unit', () => {
    expect(timeAgo(secondsAgo(0), now)).toBe('less than a minute ago');
    expect(timeAgo(secondsAgo(59), now)).toBe('less than a minute ago');
    expect(timeAgo(secondsAgo(60), now)).toBe('1 minute ago');
    expect(timeAgo(secondsAgo(190), now)).toBe('3 minutes ago');
    expect(timeAgo(secondsAgo(3599), now)).toBe('59 minutes ago');
    expect(timeAgo(secondsAgo(3600), now)).toBe('1 hour ago');
    expect(timeAgo(secondsAgo(47 * 3600 + 3599), now)).toBe('47 hours ago');
    expect(timeAgo(secondsAgo(48 * 3600), now)).toBe('2 days ago');
    expect(timeAgo(secondsAgo(30 * 86400), now)).toBe('30 days ago');
  });
});
