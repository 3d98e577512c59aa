// C++ classes whose display pahole's tests and real programs (ceph-osd's
// AgentTimeoutCB : public Context) need: base access, access sections,
// virtual and pure virtual member functions.
// Built by the tests: g++ -g -O0 -o access access.cc
struct Context {
	virtual ~Context() {}
	virtual void finish(int r) = 0;
	int ctx;
};

class AgentTimeoutCB : public Context {
public:
	AgentTimeoutCB(int x) : pg(x), other(0) {}
	void finish(int r) override { pg += r; }
	int get() const { return pg; }
	int shown;

private:
	int pg;

protected:
	long other;

public:
	char last;
};

class Priv : Context {
	int a;
	void finish(int) override {}

public:
	Priv() : a(1) {}
	int b;
};

struct Multi : AgentTimeoutCB, private Priv {
	int m;
	Multi() : AgentTimeoutCB(1), m(0) {}

protected:
	short p;

private:
	char q;
};

int main()
{
	AgentTimeoutCB a(3);
	a.finish(2);
	Multi m;
	Priv p;
	return a.get() + m.m + p.b;
}
