import type { Config } from "./config.ts";

/** Credentials for every AWS client: static keys, else a named profile, else the SDK's default chain. */
export function awsCredentials({ accessKeyId, secretAccessKey, sessionToken, profile }: Config["beta"]) {
  if (accessKeyId && secretAccessKey) return { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } };
  return profile ? { profile } : {};
}
