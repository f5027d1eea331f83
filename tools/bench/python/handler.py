"""The Python floor: the same consistent GetItem as floor-sdk-get-item, with
boto3 under awslambdaric (Python 3.11). The client is made at import, in init,
as a Lambda handler makes it."""
import os

import boto3

TABLE = os.environ["TABLE_NAME"]
dynamodb = boto3.client("dynamodb")


def handler(event, context):
    key = {name: {"S": value} for name, value in event["key"].items()}
    item = dynamodb.get_item(TableName=TABLE, Key=key, ConsistentRead=True).get("Item")
    return {"found": item is not None}
