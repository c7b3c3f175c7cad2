import unittest
from cli import parse


class T(unittest.TestCase):
    def test_path(self):
        self.assertEqual(parse(['x']).path, 'x')
