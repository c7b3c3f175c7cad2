import json


def load():
    return json.load(open('config.json'))
