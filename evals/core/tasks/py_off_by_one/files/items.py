def last_item(items):
    if not items:
        return None
    return items[len(items)]
