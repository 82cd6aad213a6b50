from tests.fixtures.s3 import moto_endpoint, s3_client, s3_config

__all__ = ["moto_endpoint", "s3_client", "s3_config"]
