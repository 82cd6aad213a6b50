"""SCIM 2.0 provisioning (RFC 7643/7644, DECISIONS 18): tokens, Users, Groups, filters, PATCH."""
