# insert: N single-row INSERTs with bound parameters, in one transaction,
# into a new database file; then one query counts them.
#   python3 insert.py FILE N
import sqlite3
import sys

file, n = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(file)
db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER, price REAL)")
with db:
    for i in range(n):
        db.execute("INSERT INTO items (name, qty, price) VALUES (?, ?, ?)", (f"item {i}", i % 100, i * 0.25))
count, qty = db.execute("SELECT count(*) AS n, sum(qty) AS q FROM items").fetchone()
print(f"{count} rows, qty {qty}")
db.close()
