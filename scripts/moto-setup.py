"""Prepares a freshly started moto server for strata's S3 tests.

    python scripts/moto-setup.py ENDPOINT BUCKET

Creates BUCKET, creates an IAM user allowed every S3 action, then turns
on moto's request authentication, so that requests signed with any other
credentials are refused (as real S3 does). Prints the user's access key id
and secret access key, separated by a space.
"""

import json
import sys
import urllib.request

import boto3


def main() -> None:
    endpoint, bucket = sys.argv[1], sys.argv[2]
    # Until authentication is on, moto accepts any credentials.
    common = dict(
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    boto3.client("s3", **common).create_bucket(Bucket=bucket)
    iam = boto3.client("iam", **common)
    iam.create_user(UserName="strata-test")
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
    }
    iam.put_user_policy(
        UserName="strata-test", PolicyName="s3", PolicyDocument=json.dumps(policy)
    )
    key = iam.create_access_key(UserName="strata-test")["AccessKey"]

    # Authenticate every request from now on (the body is the number of
    # requests still let through without it).
    request = urllib.request.Request(
        f"{endpoint}/moto-api/reset-auth",
        data=b"0",
        method="POST",
        headers={"Content-Type": "text/plain"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()

    print(key["AccessKeyId"], key["SecretAccessKey"])


if __name__ == "__main__":
    main()
