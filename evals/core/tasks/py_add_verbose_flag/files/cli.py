import argparse


def parser():
    p = argparse.ArgumentParser(prog='tool')
    p.add_argument('path')
    return p


def parse(argv):
    return parser().parse_args(argv)
