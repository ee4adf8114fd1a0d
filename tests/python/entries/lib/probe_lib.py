# A module that asks a metadata server for a fact (a node's name), as a serving
# package's import-time logging does: the answer of `requests` is no fact dkv has, so
# the branch on it needs `--set probe_lib.metadata()=None` (off the cloud: no answer).
import requests


def metadata(key=""):
  response = requests.get("http://metadata.internal/" + key)
  if response.status_code == 200 and response.text:
    return response.text
  return None


def node_name():
  name = metadata("instance-id")
  return name if name else "(unknown)"
