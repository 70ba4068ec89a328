-- The client address of each logged API call: the peer's, or behind a proxy in TRUST_PROXY the address
-- it forwarded (src/http/client-address.ts). Null for entries written before it was kept.
ALTER TABLE call_logs ADD COLUMN client_address text;
