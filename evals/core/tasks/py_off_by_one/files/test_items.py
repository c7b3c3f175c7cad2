import unittest
from items import last_item


class T(unittest.TestCase):
    def test_last(self):
        self.assertEqual(last_item([1, 2, 3]), 3)

    def test_empty(self):
        self.assertIsNone(last_item([]))
