SUMMARY = "Lever on a board: the daemon with its C library and Python client"
DESCRIPTION = "The lever package (daemon, lever.service, liblever.so, \
libqti-perfd-client.so) and lever-python."
LICENSE = "MIT"

inherit packagegroup

RDEPENDS:${PN} = "lever lever-python"
