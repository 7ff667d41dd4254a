/* Placeholder so the tree builds; the atomics/signals work replaces this whole file. */
