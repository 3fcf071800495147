# SQLite from Python, phase by phase: the same work as bench.csp (see there).
#   python3 bench.py FILE N
import sqlite3
import sys
import time

file, n = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(file)
db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER, price REAL)")
times = []
check = 0

t = time.perf_counter()
with db:
    for i in range(n):
        db.execute("INSERT INTO items (name, qty, price) VALUES (?, ?, ?)", (f"item {i}", i % 100, i * 0.25))
times.append(("insert", time.perf_counter() - t))

t = time.perf_counter()
sets = [(f"bulk {i}", i % 50, i * 0.5) for i in range(n)]
with db:
    db.executemany("INSERT INTO items (name, qty, price) VALUES (?, ?, ?)", sets)
times.append(("exec_many", time.perf_counter() - t))


def dicts(cursor, row):
    return {d[0]: v for d, v in zip(cursor.description, row)}


t = time.perf_counter()
cur = db.cursor()
cur.row_factory = dicts
total = 0
for r in cur.execute("SELECT id, name, qty, price FROM items").fetchall():
    total += r["qty"]
check += total
times.append(("query", time.perf_counter() - t))

t = time.perf_counter()
total = 0
for r in cur.execute("SELECT id, name, qty, price FROM items"):
    total += r["qty"]
check += total
times.append(("rows", time.perf_counter() - t))

t = time.perf_counter()
total = 0
for i in range(1, n + 1):
    total += cur.execute("SELECT qty FROM items WHERE id = ?", (i,)).fetchone()["qty"]
check += total
times.append(("point", time.perf_counter() - t))

for name, secs in times:
    print(name, int(secs * 1000))
print("check", check)
db.close()
