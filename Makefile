# Shortcuts; the scripts do the work (a fresh Debian may not have make).
.PHONY: demo test test-fast test-lab lint bench bench-avd fuzz clean

demo:
	bash scripts/demo.sh

test:
	bash scripts/test.sh

# the inner loop: everything but the lab and the slow tests (docs/testing.md)
test-fast:
	bash scripts/test.sh -m "not lab and not slow"

# only the tests that boot labs (root: network namespaces, FRR, lldpd, sshd)
test-lab:
	bash scripts/test.sh -m lab

# ruff (lint, format check) and mypy, as the whole suite runs them
lint:
	bash scripts/setup.sh
	bash scripts/lint.sh

bench:
	bash scripts/bench.sh

# fabricgen beside Arista AVD on the same EVPN fabric; pyavd only in bench/.venv-avd
bench-avd:
	bash scripts/bench-avd.sh

fuzz:
	bash scripts/fuzz.sh

clean:
	rm -rf .venv output/*/ .pytest_cache
