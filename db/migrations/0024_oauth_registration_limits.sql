-- Registrations that never completed consent are capped per client address and per installation
-- (mcp/oauth/registration.ts); counting one address's needs this index.
create index oauth_clients_registered_from_idx on oauth_clients (registered_from, created_at);

-- Client names may no longer hold format characters (Unicode Cf: bidi overrides and isolates,
-- zero-width spaces and joiners, tags), which let a name read as another client's: new
-- registrations are refused, and the names stored before lose them (Unicode 17's Cf set).
update oauth_clients
set name = coalesce(nullif(btrim(regexp_replace(name,
  '[\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB\U000110BD\U000110CD\U00013430-\U0001343F\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0001\U000E0020-\U000E007F]',
  '', 'g')), ''), 'Unnamed MCP client')
where name ~ '[\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB\U000110BD\U000110CD\U00013430-\U0001343F\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0001\U000E0020-\U000E007F]';
