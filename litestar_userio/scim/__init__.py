"""SCIM 2.0 provisioning (RFC 7643/7644, docs/scim.md): tokens, Users, Groups, filters, PATCH."""
