import time


def retry(fn, attempts=3):
    for i in range(attempts):
        try:
            return fn()
        except OSError:
            time.sleep(2 ** i)
    raise RuntimeError('gave up')
