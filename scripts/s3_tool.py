#!/usr/bin/env python3
"""An independent S3 client for the object-storage tests (tests/storage_s3.rs): boto3 and
pyarrow, not the Rust code under test.

    s3_tool.py ENDPOINT mkbucket BUCKET
    s3_tool.py ENDPOINT ls BUCKET PREFIX        -> {"key": size, ...}
    s3_tool.py ENDPOINT rows BUCKET PREFIX      -> {"key": rows, ...}  (each *.parquet object
                                                   read by pyarrow from the downloaded bytes)
    s3_tool.py ENDPOINT get BUCKET KEY FILE     -> writes the object to FILE

Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""
import io
import json
import os
import sys

import boto3


def client(endpoint):
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")


def listing(s3, bucket, prefix):
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            out[o["Key"]] = o["Size"]
    return out


def main(argv):
    endpoint, cmd, args = argv[1], argv[2], argv[3:]
    s3 = client(endpoint)
    if cmd == "mkbucket":
        s3.create_bucket(Bucket=args[0])
    elif cmd == "ls":
        print(json.dumps(listing(s3, args[0], args[1]), sort_keys=True))
    elif cmd == "rows":
        import pyarrow.parquet as pq

        rows = {}
        for key in listing(s3, args[0], args[1]):
            if key.endswith(".parquet"):
                body = s3.get_object(Bucket=args[0], Key=key)["Body"].read()
                rows[key] = pq.read_table(io.BytesIO(body)).num_rows
        print(json.dumps(rows, sort_keys=True))
    elif cmd == "get":
        body = s3.get_object(Bucket=args[0], Key=args[1])["Body"].read()
        with open(args[2], "wb") as f:
            f.write(body)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
    # pyarrow's native thread pools can abort the interpreter during its teardown
    # ("terminate called without an active exception", apache/arrow#34314; seen in CI
    # after `rows`). Everything is written by now, so leave without the teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
