/* Built for other machines than the host's, without headers, into
 * relocatable objects whose DWARF relocations elfx applies:
 * build: clang -target i386-linux-gnu -g -O2 -c -o OUT foreign.c
 * (and the other targets of dwarf's scanInputs). */
struct pair {
	int key;
	long value;
	struct pair *next;
};

struct table {
	struct pair *buckets[16];
	unsigned count : 12, grown : 1;
};

static unsigned hash(int key) { return (unsigned)key * 2654435761u; }

static inline struct pair *lookup(struct table *t, int key)
{
	for (struct pair *p = t->buckets[hash(key) & 15]; p; p = p->next)
		if (p->key == key)
			return p;
	return 0;
}

__attribute__((noinline)) long get(struct table *t, int key, long dflt)
{
	struct pair *p = lookup(t, key);
	return p ? p->value : dflt;
}

long total;

long sum(struct table *t, const int *keys, int n)
{
	for (int i = 0; i < n; i++)
		total += get(t, keys[i], 0) + (lookup(t, keys[i] + 1) != 0);
	return total;
}

void clear(struct table *t)
{
	for (int i = 0; i < 16; i++)
		t->buckets[i] = 0;
	t->count = 0;
}
