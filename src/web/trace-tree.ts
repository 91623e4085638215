/**
 * A trace the API sends flat, in evaluation order with a `depth` per entry
 * (GET /api/spf: an include's or redirect's steps follow its term one level
 * deeper), as the tree it describes, so the page draws it as nested lists:
 * the indentation a reader sees is the nesting, and a screen reader announces it.
 */

export interface TreeNode<T> {
  entry: T;
  children: TreeNode<T>[];
}

/**
 * Each entry becomes a child of the nearest earlier entry that is less deep,
 * or a root when there is none. A pre-order list with depths is rebuilt
 * exactly; a depth that jumps by more than one nests one level, not several.
 */
export function nestByDepth<T extends { depth: number }>(entries: readonly T[]): TreeNode<T>[] {
  const roots: TreeNode<T>[] = [];
  // The path from a root to the last entry placed: the candidates for the next one's parent.
  const path: TreeNode<T>[] = [];
  for (const entry of entries) {
    while (path.length > 0 && path[path.length - 1]!.entry.depth >= entry.depth) path.pop();
    const node: TreeNode<T> = { entry, children: [] };
    (path[path.length - 1]?.children ?? roots).push(node);
    path.push(node);
  }
  return roots;
}
