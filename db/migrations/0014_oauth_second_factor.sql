-- The MCP OAuth sign-in asks for the TOTP code after the password (SPEC §5.2 item 2, "completes
-- any required verification"): a request signed in with the password alone waits here, and
-- neither the workspace choice nor the consent accepts it until the code is given.
alter table oauth_authorizations add column second_factor_pending boolean not null default false;
