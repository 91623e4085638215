import { describe, expect, it } from 'vitest';
import { nestByDepth, type TreeNode } from '../../../src/web/trace-tree';

interface Step {
  depth: number;
  what: string;
}

/** The tree as `what` strings, children after their parent, for a readable comparison. */
function shape(nodes: TreeNode<Step>[]): unknown[] {
  return nodes.map((n) => (n.children.length ? [n.entry.what, shape(n.children)] : n.entry.what));
}

const step = (depth: number, what: string): Step => ({ depth, what });

describe('nestByDepth', () => {
  it('nests an include’s evaluation under its term, as GET /api/spf’s pre-order trace describes it', () => {
    // sender.test: "v=spf1 mx include:_spf.mailhost.test -all"; the client is in the include's ip4.
    const trace = [
      step(0, 'record sender.test'),
      step(0, 'mx'),
      step(0, 'include:_spf.mailhost.test'),
      step(1, 'record _spf.mailhost.test'),
      step(1, 'ip4:198.51.100.0/24'),
      step(1, 'ip6:2001:db8:25::/48'),
      step(1, '~all'),
      step(1, 'result pass'),
      step(0, '-all'),
      step(0, 'result pass'),
    ];
    expect(shape(nestByDepth(trace))).toEqual([
      'record sender.test',
      'mx',
      [
        'include:_spf.mailhost.test',
        ['record _spf.mailhost.test', 'ip4:198.51.100.0/24', 'ip6:2001:db8:25::/48', '~all', 'result pass'],
      ],
      '-all',
      'result pass',
    ]);
  });

  it('nests includes within includes, and a redirect’s evaluation under the redirect', () => {
    const trace = [
      step(0, 'record a.test'),
      step(0, 'redirect=b.test'),
      step(1, 'record b.test'),
      step(1, 'include:c.test'),
      step(2, 'record c.test'),
      step(2, 'result fail'),
      step(1, '?all'),
      step(1, 'result neutral'),
      step(0, 'result neutral'),
    ];
    expect(shape(nestByDepth(trace))).toEqual([
      'record a.test',
      [
        'redirect=b.test',
        ['record b.test', ['include:c.test', ['record c.test', 'result fail']], '?all', 'result neutral'],
      ],
      'result neutral',
    ]);
  });

  it('a depth that jumps by two nests one level; a list that starts deep has it as a root', () => {
    expect(shape(nestByDepth([step(0, 'a'), step(2, 'b'), step(1, 'c')]))).toEqual([['a', ['b', 'c']]]);
    expect(shape(nestByDepth([step(1, 'a'), step(0, 'b')]))).toEqual(['a', 'b']);
    expect(nestByDepth([])).toEqual([]);
  });
});
