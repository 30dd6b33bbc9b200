// Style sheets imported for their side effect: Bun's bundler puts them in the dashboard's app.css.
declare module "*.css";
