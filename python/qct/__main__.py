import sys

from qct.cli import main

sys.exit(main())
