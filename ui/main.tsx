import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { session, signIn, type Role } from "./api.ts";
import { Keys } from "./pages/keys.tsx";
import { Live } from "./pages/live.tsx";
import { Routes } from "./pages/routes.tsx";
import { Settings } from "./pages/settings.tsx";
import { Upstreams } from "./pages/upstreams.tsx";
import { Usage } from "./pages/usage.tsx";
import "./style.css";

const PAGES = { live: ["Live", Live], usage: ["Usage", Usage], upstreams: ["Upstreams", Upstreams], routes: ["Routes", Routes], keys: ["Keys", Keys], settings: ["Settings", Settings] } as const;
type PageName = keyof typeof PAGES;

const pageOf = (hash: string): PageName => {
  const name = hash.replace(/^#\/?/, "");
  return Object.hasOwn(PAGES, name) ? (name as PageName) : "live";
};

function SignIn({ onSignedIn }: { onSignedIn: (role: Role) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  return (
    <main className="signin">
      <h1>parley</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          const result = await signIn(key.trim());
          setBusy(false);
          if ("error" in result) return setError(result.error);
          session.set(key.trim());
          onSignedIn(result.role);
        }}
      >
        <label htmlFor="key">API key</label>
        <input id="key" type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} required autoFocus />
        <p className="hint">A key with the <code>admin</code> scope sees everything and can act; one with <code>usage</code> reads. It is kept in this tab only.</p>
        {error && <p className="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
    </main>
  );
}

function App() {
  const [role, setRole] = useState<Role | "checking" | undefined>(session.key() ? "checking" : undefined);
  const [page, setPage] = useState<PageName>(pageOf(location.hash));
  useEffect(() => {
    const onHash = () => setPage(pageOf(location.hash));
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  useEffect(() => {
    const key = session.key();
    if (role === "checking" && key) void signIn(key).then((r) => ("role" in r ? setRole(r.role) : (session.clear(), setRole(undefined))));
  }, [role]);
  if (role === "checking") return <p className="loading">Checking the key…</p>;
  if (!role) return <SignIn onSignedIn={setRole} />;
  const [title, Page] = PAGES[page];
  return (
    <>
      <header>
        <span className="brand">parley</span>
        <nav aria-label="Pages">
          {Object.entries(PAGES).map(([name, [label]]) => (
            <a key={name} href={`#/${name}`} aria-current={name === page ? "page" : undefined}>{label}</a>
          ))}
        </nav>
        <span className="who">{role === "admin" ? "admin" : "read-only"}</span>
        <button type="button" className="link" onClick={() => (session.clear(), setRole(undefined))}>Sign out</button>
      </header>
      <main>
        <h1>{title}</h1>
        <Page admin={role === "admin"} />
      </main>
    </>
  );
}

createRoot(document.getElementById("root")!).render(<App />);
