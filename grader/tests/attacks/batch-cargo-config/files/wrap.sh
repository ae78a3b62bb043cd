#!/bin/sh
# The batch-cargo-config attack: runs instead of rustc if cargo reads the submission's configuration.
echo "rustc-wrapper ran: $*" >> "@DROP@/batch-cargo-config-wrapper.txt"
exec "$@"
