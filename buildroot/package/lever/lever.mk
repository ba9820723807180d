################################################################################
#
# lever
#
################################################################################

LEVER_VERSION = main
LEVER_SITE = https://example.invalid/lever.git
LEVER_SITE_METHOD = git
LEVER_LICENSE = Apache-2.0
# The workspace root: cargo-package builds its members; only these three
# (the binary, liblever.so, libUrmClient.so).
LEVER_CARGO_BUILD_OPTS = -p lever -p lever-capi -p lever-urm-capi
# The board's features and the extras chosen in Config.in
# (docs/install.md "Features").
LEVER_FEATURES = lever/board \
	$(if $(BR2_PACKAGE_LEVER_DBUS),lever/dbus) \
	$(if $(BR2_PACKAGE_LEVER_POSTGRES),lever/postgres) \
	$(if $(BR2_PACKAGE_LEVER_PARQUET),lever/parquet) \
	$(if $(BR2_PACKAGE_LEVER_HTML),lever/html) \
	$(if $(BR2_PACKAGE_LEVER_FLAMEGRAPH),lever/flamegraph)
LEVER_CARGO_BUILD_OPTS += --no-default-features \
	--features $(subst $(space),$(comma),$(strip $(LEVER_FEATURES)))
# `lever --version` names the commit (the download has no .git).
LEVER_CARGO_ENV = LEVER_GIT_REV=$(LEVER_VERSION)

# The completions and man pages are written by a lever that runs on the
# build machine: this package built for the host.
HOST_LEVER_CARGO_BUILD_OPTS = -p lever --no-default-features --features lever/board
LEVER_DEPENDENCIES = host-lever

# Where cargo-package's build step (--release unless BR2_ENABLE_DEBUG,
# CARGO_BUILD_TARGET set) leaves the binaries.
LEVER_BUILT = $(@D)/target/$(RUSTC_TARGET_NAME)/$(if $(BR2_ENABLE_DEBUG),debug,release)

# The same file list as the Debian package and the Yocto recipe
# (packaging/files.txt): packaging/install.sh installs it.
define LEVER_INSTALL_TARGET_CMDS
	$(@D)/packaging/install.sh $(TARGET_DIR) \
		$(LEVER_BUILT)/lever $(LEVER_BUILT)/liblever.so \
		$(HOST_DIR)/bin/lever \
		usr/lib/python$(PYTHON3_VERSION_MAJOR)/site-packages
endef

define HOST_LEVER_INSTALL_CMDS
	$(INSTALL) -D -m 0755 $(@D)/target/release/lever $(HOST_DIR)/bin/lever
endef

# The group whose members are system clients (lever.service's socket is
# root:lever 0660); also in /usr/lib/sysusers.d for systemd.
define LEVER_USERS
	- - lever -1 - - - - Lever resource manager clients
endef

$(eval $(cargo-package))
$(eval $(host-cargo-package))
