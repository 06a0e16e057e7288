//! Every ```json lb-config block of docs/configuration.md builds a router.
