import urllib.request


def fetch(url):
    return urllib.request.urlopen(url).read()
