"""Alembic's environment for the store: migrations run on the connection :func:`economics.store.database.migrate`
passes (``config.attributes["connection"]``), inside its transaction.
"""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, render_as_batch=True, transaction_per_migration=False)
with context.begin_transaction():
    context.run_migrations()
