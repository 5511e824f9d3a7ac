//! Known vendor OMPD libraries: fetching them into a cache without root, and resolving names.
